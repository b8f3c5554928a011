//! SR-IOV vGPU: A100 and H100.
//!
//! Written from:
//! * OpenStack Nova, "Attaching virtual GPU devices to guests"
//!   (https://docs.openstack.org/nova/latest/admin/virtual-gpu.html, Apache-2.0), its SR-IOV
//!   section: on GPUs that use SR-IOV (A100 and later) the driver creates the vGPU on a virtual
//!   function, each virtual function listed under `[mdev_<type>] device_addresses` becomes a
//!   resource provider below the compute node, named after the host and the function's PCI
//!   address, with a VGPU inventory of one;
//! * NVIDIA Virtual GPU Software User Guide, "Virtual GPU Types for Supported GPUs"
//!   (https://docs.nvidia.com/vgpu/latest/grid-vgpu-user-guide/index.html, NVIDIA documentation,
//!   facts only): A100 PCIe 40GB, type A100-10C has a 10 GB framebuffer, 4 per GPU; H100 SXM5
//!   80GB, type H100XM-20C has 20 GB, 4 per GPU. An A100's virtual functions follow its physical
//!   function on its bus (`41:00.0` -> `41:00.4` ... `41:03.3`).

use super::*;

/// One A100 (PF 0000:41:00.0) of host gpu-a100-01, four virtual functions 41:00.4-41:00.7 enabled
/// for Nova's `nvidia-471` mdev type, which the operator tagged with trait CUSTOM_NVIDIA_471; three
/// of them hold a VM's vGPU.
fn a100_cloud() -> CloudState {
    let mut providers = vec![compute_node("node-a100", "gpu-a100-01")];
    for (function, used) in [("00_4", 1), ("00_5", 1), ("00_6", 1), ("00_7", 0)] {
        providers.push(vgpu_provider(
            "node-a100",
            "gpu-a100-01",
            &format!("0000_41_{function}"),
            1,
            used,
            &["CUSTOM_NVIDIA_471"],
        ));
    }
    let flavor = flavor(
        "f0000000-0000-4000-8000-000000000010",
        "vg.a100-10c",
        "CUSTOM_NVIDIA_471",
    );
    let servers = servers("a1000000", 3, &flavor, "2026-11-20T00:00:00Z");
    cloud(providers, vec![flavor], servers)
}

#[test]
fn three_a100_10c_vms_on_one_sriov_a100_are_three_quarters_of_one_gpu() {
    // Truth: 1 physical A100 (4 providers are its virtual functions). A100-10C: 40 GB / 10 GB = 4
    // per GPU, so each VM holds 1/4. December: 3 VMs x 1/4 x 744 h = 558 GPU-hours, within
    // 1 GPU x 744 h (before: 4 GPUs published and 3 x 744 = 2,232 GPU-hours metered).
    let config = config("[openstack.vgpu_profile]\nCUSTOM_NVIDIA_471 = \"A100-10C\"\n");
    let outcome = run(&config, &a100_cloud());
    assert!(
        outcome.mapped.warnings.is_empty(),
        "{:?}",
        outcome.mapped.warnings
    );
    assert!(
        outcome.mapped.notes.iter().any(|n| n.contains(
            "vGPU type CUSTOM_NVIDIA_471: NVIDIA A100-10C (as [openstack.vgpu_profile] names it)"
        )),
        "{:?}",
        outcome.mapped.notes
    );
    let model = "NVIDIA A100-PCIE-40GB";
    assert_eq!(outcome.physical(model), 1.0);
    // 4 vGPU slots of 1/4: 3 used, 1 free
    assert_eq!(
        outcome.kinds(),
        [(
            "nvidia-a100-pcie-40gb.vgpu.nvidia-471".to_owned(),
            4.0,
            3.0,
            1.0
        )]
    );
    let counts = outcome.counts();
    assert_eq!(counts.len(), 3);
    assert!(counts.values().all(|c| *c == 0.25), "{counts:?}");
    assert!(close(outcome.gpu_hours(model), 558.0));
    assert!(outcome.gpu_hours(model) <= outcome.physical(model) * MONTH_HOURS);
    assert!(
        outcome.metered.overruns.is_empty(),
        "{:?}",
        outcome.metered.overruns
    );
    assert!(outcome.report_check().is_empty());
}

#[test]
fn an_sriov_gpu_of_unknown_type_is_still_one_gpu_and_says_what_to_configure() {
    // Truth without the type: still 1 physical A100; each vGPU is taken as one of its 4 enabled
    // functions (1/4 here), and a warning names the GPU and the setting.
    let outcome = run(&config(""), &a100_cloud());
    let warned = outcome.mapped.warnings.iter().any(|w| {
        w.contains("\"gpu-a100-01_pci_0000_41_00_0\"") && w.contains("[openstack.vgpu_profile]")
    });
    assert!(warned, "{:?}", outcome.mapped.warnings);
    let model = "NVIDIA_471";
    assert_eq!(outcome.physical(model), 1.0);
    assert!(outcome.gpu_hours(model) <= outcome.physical(model) * MONTH_HOURS);
    assert!(outcome.metered.overruns.is_empty());
    assert!(outcome.report_check().is_empty());
}

#[test]
fn h100_sriov_functions_group_under_their_two_gpus() {
    // Two H100 SXM5 (PFs 0000:1b:00.0 and 0000:9b:00.0) of host gpu-h100-01, eight virtual
    // functions each enabled for H100XM-20C, which the trait CUSTOM_NVIDIA_H100XM_20C spells.
    // Truth: 2 physical GPUs (16 providers); H100XM-20C: 80 GB / 20 GB = 4 per GPU, so 8 slots.
    // Five VMs (four on the first GPU, one on the second) all December: 5 x 1/4 x 744 = 930
    // GPU-hours, within 2 x 744 = 1,488.
    let mut providers = vec![compute_node("node-h100", "gpu-h100-01")];
    for (bus, used) in [("1b", 4), ("9b", 1)] {
        for (i, function) in [
            "00_4", "00_5", "00_6", "00_7", "01_0", "01_1", "01_2", "01_3",
        ]
        .into_iter()
        .enumerate()
        {
            providers.push(vgpu_provider(
                "node-h100",
                "gpu-h100-01",
                &format!("0000_{bus}_{function}"),
                1,
                u64::from(i < used),
                &["CUSTOM_NVIDIA_H100XM_20C"],
            ));
        }
    }
    let flavor = flavor(
        "f0000000-0000-4000-8000-000000000020",
        "vg.h100-20c",
        "CUSTOM_NVIDIA_H100XM_20C",
    );
    let servers = servers("b1000000", 5, &flavor, "2026-11-30T12:00:00Z");
    let state = cloud(providers, vec![flavor], servers);
    let outcome = run(&config(""), &state);
    assert!(
        outcome.mapped.warnings.is_empty(),
        "{:?}",
        outcome.mapped.warnings
    );
    assert!(
        outcome
            .mapped
            .notes
            .iter()
            .any(|n| n.contains("NVIDIA H100XM-20C (read from the trait's name)")),
        "{:?}",
        outcome.mapped.notes
    );
    let model = "NVIDIA H100 80GB HBM3";
    assert_eq!(outcome.physical(model), 2.0);
    assert_eq!(
        outcome.kinds(),
        [(
            "nvidia-h100-80gb-hbm3.vgpu.nvidia-h100xm-20c".to_owned(),
            8.0,
            5.0,
            2.0
        )]
    );
    let counts = outcome.counts();
    assert_eq!(counts.len(), 5);
    assert!(counts.values().all(|c| *c == 0.25), "{counts:?}");
    assert!(close(outcome.gpu_hours(model), 930.0));
    assert!(outcome.gpu_hours(model) <= outcome.physical(model) * MONTH_HOURS);
    assert!(outcome.metered.overruns.is_empty());
    assert!(outcome.report_check().is_empty());
}
