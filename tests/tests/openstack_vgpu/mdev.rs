//! mdev vGPU with two types on one host.
//!
//! Written from:
//! * OpenStack Nova, "Attaching virtual GPU devices to guests"
//!   (https://docs.openstack.org/nova/latest/admin/virtual-gpu.html, Apache-2.0): with several
//!   `[devices] enabled_mdev_types`, each `[mdev_<type>] device_addresses` names the physical GPUs
//!   of a type; each physical GPU is a resource provider below the compute node, named after the
//!   host and its PCI address, whose VGPU total is the instances of its type the GPU holds; the
//!   operator tags each GPU's provider with a custom trait (the guide's `CUSTOM_NVIDIA_11`,
//!   `CUSTOM_NVIDIA_12`) and flavors require it;
//! * NVIDIA Virtual GPU Software User Guide, "Virtual GPU Types for Supported GPUs"
//!   (https://docs.nvidia.com/vgpu/latest/grid-vgpu-user-guide/index.html, NVIDIA documentation,
//!   facts only): Tesla T4 (16 GB), type T4-4C holds 4 per GPU, T4-8C holds 2.

use super::*;

/// Host gpu-t4-01 with two T4s: 0000:3b:00.0 carved as T4-4C (Nova type nvidia-222, trait
/// CUSTOM_NVIDIA_222, VGPU total 4) and 0000:5e:00.0 as T4-8C (nvidia-223, CUSTOM_NVIDIA_223,
/// total 2), both described to accelfed as the same GPU model.
fn t4_cloud() -> CloudState {
    let providers = vec![
        compute_node("node-t4", "gpu-t4-01"),
        vgpu_provider(
            "node-t4",
            "gpu-t4-01",
            "0000_3b_00_0",
            4,
            4,
            &["CUSTOM_NVIDIA_222"],
        ),
        vgpu_provider(
            "node-t4",
            "gpu-t4-01",
            "0000_5e_00_0",
            2,
            2,
            &["CUSTOM_NVIDIA_223"],
        ),
    ];
    let small = flavor(
        "f0000000-0000-4000-8000-000000000030",
        "vg.t4-4c",
        "CUSTOM_NVIDIA_222",
    );
    let large = flavor(
        "f0000000-0000-4000-8000-000000000031",
        "vg.t4-8c",
        "CUSTOM_NVIDIA_223",
    );
    let mut running = servers("c1000000", 4, &small, "2026-11-01T00:00:00Z");
    running.extend(servers("c2000000", 2, &large, "2026-11-01T00:00:00Z"));
    cloud(providers, vec![small, large], running)
}

const DESCRIBED: &str = r#"
[openstack.vgpu_type.CUSTOM_NVIDIA_222]
vendor = "NVIDIA"
model = "Tesla T4"
memory = "4 GB"
[openstack.vgpu_type.CUSTOM_NVIDIA_223]
vendor = "NVIDIA"
model = "Tesla T4"
memory = "8 GB"
"#;

#[test]
fn two_types_on_one_host_are_two_kinds_of_one_gpu_each() {
    // Truth: 2 physical T4s. Placement says the shares on this layout: 4 per GPU (1/4) and
    // 2 per GPU (1/2). Kinds: 4 slots x 1/4 = 1 GPU and 2 slots x 1/2 = 1 GPU. December, all
    // six VMs busy: 4 x 1/4 x 744 + 2 x 1/2 x 744 = 1,488 GPU-hours = exactly 2 x 744, the
    // bound, not above it (before: one kind of share 1/4, 1.5 GPUs installed, a false overrun).
    let outcome = run(&config(DESCRIBED), &t4_cloud());
    assert!(
        outcome.mapped.warnings.is_empty(),
        "{:?}",
        outcome.mapped.warnings
    );
    let model = "Tesla T4";
    assert_eq!(outcome.physical(model), 2.0);
    assert_eq!(
        outcome.kinds(),
        [
            ("tesla-t4.vgpu.nvidia-222".to_owned(), 4.0, 4.0, 1.0),
            ("tesla-t4.vgpu.nvidia-223".to_owned(), 2.0, 2.0, 1.0),
        ]
    );
    let counts = outcome.counts();
    assert_eq!(counts.len(), 6);
    for (server, count) in &counts {
        let expected = if server.starts_with("c1") { 0.25 } else { 0.5 };
        assert_eq!(*count, expected, "{server}");
    }
    assert!(close(outcome.gpu_hours(model), 1488.0));
    assert!(outcome.gpu_hours(model) <= outcome.physical(model) * MONTH_HOURS * (1.0 + 1e-9));
    assert!(
        outcome.metered.overruns.is_empty(),
        "{:?}",
        outcome.metered.overruns
    );
    assert!(outcome.report_check().is_empty());
    // The flavors name the same kinds as the capacity they draw on.
    let instance_kinds: Vec<f64> = outcome
        .mapped
        .service
        .instance_types
        .iter()
        .filter_map(|t| t.accelerator.as_ref())
        .map(|a| a.gpu.sharing.physical_share())
        .collect();
    assert_eq!(instance_kinds, [0.25, 0.5]);
}

#[test]
fn types_named_in_the_configuration_name_the_gpu_itself() {
    // The same host, described only by NVIDIA type names: the kinds then name the T4 (from the
    // type table) and the truth is the same 2 GPUs and 1,488 GPU-hours.
    let named = "[openstack.vgpu_profile]\nCUSTOM_NVIDIA_222 = \"T4-4C\"\n\"gpu-t4-01_pci_0000_5e_00_0\" = \"T4-8C\"\n";
    let outcome = run(&config(named), &t4_cloud());
    assert!(
        outcome.mapped.warnings.is_empty(),
        "{:?}",
        outcome.mapped.warnings
    );
    let model = "Tesla T4";
    assert_eq!(outcome.physical(model), 2.0);
    assert!(close(outcome.gpu_hours(model), 1488.0));
    assert!(outcome.metered.overruns.is_empty());
    assert!(outcome.report_check().is_empty());
}
