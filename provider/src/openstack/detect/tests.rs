use std::collections::BTreeMap;

use accelfed_schemas::gpu::{GpuCount, Sharing, Virtualization};
use serde::Deserialize;

use super::*;
use crate::openstack::api::Flavor;

const CONFIG: &str = r#"
    [[openstack]]
    id = "cloud"
    [openstack.pci_alias.nvidia-v100]
    vendor = "NVIDIA"
    model = "Tesla V100-PCIE-32GB"
    memory = "32 GB"
    [openstack.vgpu_type.CUSTOM_NVIDIA_A100_4C]
    vendor = "NVIDIA"
    model = "A100-SXM4-40GB"
    memory = "4 GB"
"#;

fn detector(source: &str) -> Detector {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let file: File = toml::from_str(source).unwrap();
    Detector::new(&file.openstack[0])
}

fn specs(pairs: &[(&str, &str)]) -> Specs {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn real_flavors_of_every_captured_kind() {
    #[derive(Deserialize)]
    struct Flavors {
        flavors: Vec<Flavor>,
    }
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/openstack/nova-flavors-detail-2.61.json"
    ))
    .unwrap();
    let flavors: Flavors = serde_json::from_str(&text).unwrap();
    let detector = detector(CONFIG);
    let found: BTreeMap<_, _> = flavors
        .flavors
        .iter()
        .map(|f| {
            let d = detector.detect(&f.name, f.extra_specs.as_ref().unwrap());
            assert!(d.warnings.is_empty(), "{:?}", d.warnings);
            (f.name.as_str(), d.gpu)
        })
        .collect();
    assert_eq!(found["m1.medium"], None);
    let v100 = found["g1.v100x2"].as_ref().unwrap();
    assert_eq!(v100.count, GpuCount::whole(2));
    assert_eq!(v100.spec.model.as_str(), "Tesla V100-PCIE-32GB");
    assert_eq!(v100.spec.virtualization, Virtualization::Passthrough);
    assert_eq!(v100.convention, Convention::PciAlias);
    let vgpu = found["vg1.a100-4c"].as_ref().unwrap();
    assert_eq!(vgpu.count, GpuCount::whole(1));
    assert_eq!(vgpu.spec.virtualization, Virtualization::Vgpu);
    assert_eq!(vgpu.spec.memory.unwrap().get(), 4_000);
    assert_eq!(vgpu.resource_class.as_deref(), Some("VGPU"));
}

#[test]
fn egi_keys_win_and_allow_fractions() {
    let d = detector(CONFIG).detect(
        "egi.half",
        &specs(&[
            ("Accelerator:Type", "GPU"),
            ("Accelerator:Vendor", "NVIDIA"),
            ("Accelerator:Model", "Tesla V100-PCIE-32GB"),
            ("Accelerator:Number", "0.5"),
            ("Accelerator:Memory", "16"),
            ("Accelerator:VirtualizationType", "vgpu"),
        ]),
    );
    let gpu = d.gpu.unwrap();
    assert_eq!(gpu.count.to_string(), "0.5");
    assert_eq!(gpu.spec.memory.unwrap().get(), 16_000);
    assert_eq!(gpu.spec.virtualization, Virtualization::Vgpu);
    assert!(d.warnings.is_empty());
}

#[test]
fn egi_keys_without_a_virtualization_follow_the_flavors_vgpu_request() {
    let keys = [
        ("Accelerator:Type", "GPU"),
        ("Accelerator:Vendor", "NVIDIA"),
        ("Accelerator:Model", "A100-SXM4-40GB"),
        ("Accelerator:Number", "1"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let pairs: Vec<_> = keys.iter().chain(extra).copied().collect();
        detector(CONFIG).detect("egi.a100", &specs(&pairs))
    };
    let vgpu = with(&[
        ("resources:VGPU", "1"),
        ("trait:CUSTOM_NVIDIA_A100_4C", "required"),
    ]);
    let gpu = vgpu.gpu.unwrap();
    assert_eq!(gpu.convention, Convention::Egi);
    assert_eq!(gpu.spec.virtualization, Virtualization::Vgpu);
    assert_eq!(gpu.resource_class.as_deref(), Some("VGPU"));
    assert!(vgpu.warnings.is_empty(), "{:?}", vgpu.warnings);
    let plain = with(&[]).gpu.unwrap();
    assert_eq!(plain.spec.virtualization, Virtualization::Passthrough);
    // the keys' own word wins over the request
    let said = with(&[
        ("Accelerator:VirtualizationType", "passthrough"),
        ("resources:VGPU", "1"),
    ]);
    assert_eq!(
        said.gpu.unwrap().spec.virtualization,
        Virtualization::Passthrough
    );
}

#[test]
fn legacy_keys_and_custom_pci_classes() {
    let d = detector(CONFIG).detect(
        "legacy",
        &specs(&[
            ("gpu_number", "4"),
            ("gpu_vendor", "AMD"),
            ("gpu_model", "Instinct MI250X"),
        ]),
    );
    assert_eq!(d.gpu.unwrap().count, GpuCount::whole(4));
    let d = detector(CONFIG).detect("pci", &specs(&[("resources1:CUSTOM_PCI_10DE_20B5", "2")]));
    let gpu = d.gpu.unwrap();
    // Named by the PCI table, in the canonical spelling nvidia-smi prints.
    assert_eq!(gpu.spec.model.as_str(), "NVIDIA A100 80GB PCIe");
    assert_eq!(gpu.spec.vendor.as_str(), "NVIDIA");
    assert_eq!(gpu.resource_class.as_deref(), Some("CUSTOM_PCI_10DE_20B5"));
    assert!(d.warnings.is_empty());
}

#[test]
fn agreeing_conventions_are_quiet_and_conflicting_ones_warn_naming_the_flavor() {
    let both = specs(&[
        ("Accelerator:Type", "GPU"),
        ("Accelerator:Vendor", "NVIDIA"),
        ("Accelerator:Model", "V100"),
        ("Accelerator:Number", "2"),
        ("pci_passthrough:alias", "nvidia-v100:2"),
    ]);
    let d = detector(CONFIG).detect("g.agree", &both);
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert_eq!(d.gpu.unwrap().convention, Convention::Egi);

    let mut conflict = both.clone();
    conflict.insert("pci_passthrough:alias".into(), "nvidia-v100:1".into());
    let d = detector(CONFIG).detect("g.conflict", &conflict);
    assert_eq!(d.gpu.as_ref().unwrap().count, GpuCount::whole(2));
    assert_eq!(d.warnings.len(), 1);
    assert!(
        d.warnings[0].contains("\"g.conflict\""),
        "{}",
        d.warnings[0]
    );
    assert!(d.warnings[0].contains("egi and pci-alias conventions disagree (2 vs 1 GPUs)"));

    // precedence is configuration: pci-alias first now wins the same flavor
    let reordered = format!("{CONFIG}\n").replace(
        "id = \"cloud\"",
        "id = \"cloud\"\nconventions = [\"pci-alias\", \"egi\"]",
    );
    let d = detector(&reordered).detect("g.conflict", &conflict);
    assert_eq!(d.gpu.unwrap().count, GpuCount::whole(1));
}

#[test]
fn malformed_specs_warn_and_never_count() {
    let detector = detector(CONFIG);
    for (specs, expect) in [
        (
            specs(&[("pci_passthrough:alias", "garbage")]),
            "is not alias:count",
        ),
        (
            specs(&[("pci_passthrough:alias", "nvidia-v100:two")]),
            "not a whole number",
        ),
        (
            specs(&[("pci_passthrough:alias", "mystery-nic:1")]),
            "mystery-nic not described",
        ),
        (
            specs(&[
                ("Accelerator:Vendor", "NVIDIA"),
                ("Accelerator:Model", "A100"),
                ("Accelerator:Number", "many"),
            ]),
            "Accelerator:Number=\"many\" is not a GPU count",
        ),
        (
            specs(&[("Accelerator:Number", "1")]),
            "Accelerator:Vendor is missing",
        ),
        (specs(&[("resources:VGPU", "-1")]), "is not a whole number"),
    ] {
        let d = detector.detect("bad.flavor", &specs);
        assert_eq!(d.gpu, None, "{specs:?}");
        assert_eq!(d.warnings.len(), 1, "{specs:?}");
        assert!(
            d.warnings[0].starts_with("flavor \"bad.flavor\": "),
            "{}",
            d.warnings[0]
        );
        assert!(
            d.warnings[0].contains(expect),
            "{} / {expect}",
            d.warnings[0]
        );
    }
    // a malformed convention falls through to the next readable one, with the warning
    let d = detector.detect(
        "half.bad",
        &specs(&[
            ("Accelerator:Number", "many"),
            ("pci_passthrough:alias", "nvidia-v100:1"),
        ]),
    );
    assert_eq!(d.gpu.unwrap().count, GpuCount::whole(1));
    assert_eq!(d.warnings.len(), 1);
}

#[test]
fn unconfigured_vgpu_types_are_named_from_the_trait() {
    let d = detector("[[openstack]]\nid = \"c\"\n").detect(
        "vg",
        &specs(&[
            ("resources:VGPU", "2"),
            ("trait:CUSTOM_NVIDIA_A100_4C", "required"),
        ]),
    );
    let gpu = d.gpu.unwrap();
    assert_eq!(gpu.spec.model.as_str(), "NVIDIA_A100_4C");
    assert_eq!(gpu.spec.vendor.as_str(), "NVIDIA");
    assert_eq!(gpu.count, GpuCount::whole(2));
}

#[test]
fn devices_that_are_not_accelerators_neither_make_nor_hide_a_gpu_flavor() {
    let config = r#"
        [[openstack]]
        id = "cloud"
        [openstack.pci_alias.a100]
        vendor = "NVIDIA"
        model = "A100-SXM4-40GB"
        vendor_id = "10de"
        product_id = "20b0"
        [openstack.pci_alias.nic-sriov]
        type = "Other"
        vendor = "Mellanox"
        model = "ConnectX-6 Virtual Function"
        vendor_id = "15b3"
        product_id = "101c"
        [openstack.resource_class.CUSTOM_PCI_10DE_1EB8]
        type = "Other"
        vendor = "NVIDIA"
        model = "T4 reserved for video transcoding"
    "#;
    let detector = detector(config);
    let d = detector.detect(
        "g.a100-nic",
        &specs(&[("pci_passthrough:alias", "a100:1,nic-sriov:1")]),
    );
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    let gpu = d.gpu.unwrap();
    assert_eq!(gpu.count, GpuCount::whole(1));
    // The configured `A100-SXM4-40GB`, in the model catalogue's canonical spelling.
    assert_eq!(gpu.spec.model.as_str(), "NVIDIA A100-SXM4-40GB");
    assert_eq!(gpu.spec.sharing, Sharing::Whole);

    let nic_only = detector.detect(
        "n.sriov",
        &specs(&[("pci_passthrough:alias", "nic-sriov:2")]),
    );
    assert_eq!(nic_only, Detection::default());

    // Placement classes: a NIC's class beside a GPU's, an `Other` class, an unknown vendor
    let d = detector.detect(
        "pci.mixed",
        &specs(&[
            ("resources1:CUSTOM_PCI_15B3_101C", "1"),
            ("resources2:CUSTOM_PCI_10DE_20B5", "1"),
        ]),
    );
    assert_eq!(
        d.gpu.unwrap().resource_class.as_deref(),
        Some("CUSTOM_PCI_10DE_20B5")
    );
    for class in [
        "CUSTOM_PCI_15B3_101C",
        "CUSTOM_PCI_10DE_1EB8",
        "CUSTOM_PCI_8086_1592",
    ] {
        let key = format!("resources:{class}");
        let d = detector.detect("not.gpu", &specs(&[(key.as_str(), "1")]));
        assert_eq!(d, Detection::default(), "{class}");
        assert!(!detector.devices().is_gpu_class(class), "{class}");
    }
    assert!(detector.devices().is_gpu_class("CUSTOM_PCI_10DE_20B0"));
}

#[test]
fn disabled_conventions_are_not_read() {
    let d = detector("[[openstack]]\nid = \"c\"\nconventions = [\"egi\"]\n")
        .detect("g", &specs(&[("resources:VGPU", "1")]));
    assert_eq!(d, Detection::default());
}
