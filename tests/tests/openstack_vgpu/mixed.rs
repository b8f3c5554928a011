//! A cloud with both layouts: an SR-IOV A100 host whose two GPUs carry different types, and an
//! mdev T4 host.
//!
//! Written from the same documents as `sriov.rs` and `mdev.rs`: Nova's "Attaching virtual GPU
//! devices to guests" (https://docs.openstack.org/nova/latest/admin/virtual-gpu.html, Apache-2.0;
//! SR-IOV: one provider per virtual function with one vGPU; mdev: one provider per GPU holding
//! its type's instances) and NVIDIA's vGPU user guide type tables
//! (https://docs.nvidia.com/vgpu/latest/grid-vgpu-user-guide/index.html, facts only): A100 PCIe
//! 40GB A100-10C 4 per GPU, A100-20C 2 per GPU; Tesla T4 T4-8C 2 per GPU.

use super::*;

fn both_layouts() -> CloudState {
    let mut providers = vec![
        compute_node("node-a100", "gpu-a100-02"),
        compute_node("node-t4", "gpu-t4-02"),
    ];
    // A100 at 41:00.0: four functions enabled for A100-10C, all busy.
    for function in ["00_4", "00_5", "00_6", "00_7"] {
        providers.push(vgpu_provider(
            "node-a100",
            "gpu-a100-02",
            &format!("0000_41_{function}"),
            1,
            1,
            &["CUSTOM_NVIDIA_A100_10C"],
        ));
    }
    // A100 at 81:00.0: sixteen functions enabled for A100-20C (only 2 can hold one), 2 busy.
    for i in 0..16u64 {
        let slot = (i + 4) / 8;
        let function = (i + 4) % 8;
        providers.push(vgpu_provider(
            "node-a100",
            "gpu-a100-02",
            &format!("0000_81_{slot:02x}_{function}"),
            1,
            u64::from(i < 2),
            &["CUSTOM_NVIDIA_A100_20C"],
        ));
    }
    // T4 at 3b:00.0, mdev, T4-8C: 2 per GPU, 1 busy.
    providers.push(vgpu_provider(
        "node-t4",
        "gpu-t4-02",
        "0000_3b_00_0",
        2,
        1,
        &["CUSTOM_NVIDIA_T4_8C"],
    ));
    let ten = flavor(
        "f0000000-0000-4000-8000-000000000040",
        "vg.a100-10c",
        "CUSTOM_NVIDIA_A100_10C",
    );
    let twenty = flavor(
        "f0000000-0000-4000-8000-000000000041",
        "vg.a100-20c",
        "CUSTOM_NVIDIA_A100_20C",
    );
    let t4 = flavor(
        "f0000000-0000-4000-8000-000000000042",
        "vg.t4-8c",
        "CUSTOM_NVIDIA_T4_8C",
    );
    let mut running = servers("d1000000", 4, &ten, "2026-11-15T00:00:00Z");
    running.extend(servers("d2000000", 2, &twenty, "2026-11-15T00:00:00Z"));
    // The T4 VM starts mid-December: 16 days left, 384 hours.
    running.extend(servers("d3000000", 1, &t4, "2026-12-16T00:00:00Z"));
    cloud(providers, vec![ten, twenty, t4], running)
}

#[test]
fn each_layout_and_type_counts_its_own_gpus() {
    // Truth: A100s: 2 physical (4 + 16 providers are their functions): 4 slots of 1/4 and 2 slots
    // of 1/2 (the sixteen functions of the second GPU offer only the 2 its type holds). T4: 1
    // physical, 2 slots of 1/2. December: A100 4 x 1/4 x 744 + 2 x 1/2 x 744 = 1,488 = 2 x 744;
    // T4 1 x 1/2 x 384 = 192 <= 744.
    let outcome = run(&config(""), &both_layouts());
    assert!(
        outcome.mapped.warnings.is_empty(),
        "{:?}",
        outcome.mapped.warnings
    );
    assert!(
        outcome.meter_warnings.is_empty(),
        "{:?}",
        outcome.meter_warnings
    );
    let (a100, t4) = ("NVIDIA A100-PCIE-40GB", "Tesla T4");
    assert_eq!(outcome.physical(a100), 2.0);
    assert_eq!(outcome.physical(t4), 1.0);
    assert_eq!(
        outcome.kinds(),
        [
            (
                "nvidia-a100-pcie-40gb.vgpu.nvidia-a100-10c".to_owned(),
                4.0,
                4.0,
                1.0
            ),
            (
                "nvidia-a100-pcie-40gb.vgpu.nvidia-a100-20c".to_owned(),
                2.0,
                2.0,
                1.0
            ),
            ("tesla-t4.vgpu.nvidia-t4-8c".to_owned(), 2.0, 1.0, 1.0),
        ]
    );
    let counts = outcome.counts();
    assert_eq!(counts.len(), 7);
    for (server, count) in &counts {
        let expected = if server.starts_with("d1") { 0.25 } else { 0.5 };
        assert_eq!(*count, expected, "{server}");
    }
    assert!(close(outcome.gpu_hours(a100), 1488.0));
    assert!(close(outcome.gpu_hours(t4), 192.0));
    for model in [a100, t4] {
        let bound = outcome.physical(model) * MONTH_HOURS * (1.0 + 1e-9);
        assert!(outcome.gpu_hours(model) <= bound, "{model}");
    }
    assert!(
        outcome.metered.overruns.is_empty(),
        "{:?}",
        outcome.metered.overruns
    );
    assert!(outcome.report_check().is_empty());
}
