//! Names for PCI vendor and product ids, for `CUSTOM_PCI_<VENDOR>_<PRODUCT>` resource classes that
//! the configuration does not describe. A short table of data-centre GPUs (facts from the PCI ID
//! registry); anything else is named by its ids so it is still counted, and the site can describe it
//! under `[openstack.resource_class]`.

/// The vendor's name for a PCI vendor id (lower-case hex).
pub fn vendor_name(vendor: &str) -> Option<&'static str> {
    match vendor {
        "10de" => Some("NVIDIA"),
        "1002" => Some("AMD"),
        "8086" => Some("Intel"),
        "1ded" => Some("Alibaba"),
        _ => None,
    }
}

/// Model name and memory in MB for known (vendor, product) pairs (lower-case hex).
pub fn product(vendor: &str, product: &str) -> Option<(&'static str, Option<u64>)> {
    let known: &[(&str, &str, &str, Option<u64>)] = &[
        ("10de", "1db4", "Tesla V100-PCIE-16GB", Some(16_000)),
        ("10de", "1db5", "Tesla V100-SXM2-16GB", Some(16_000)),
        ("10de", "1db6", "Tesla V100-PCIE-32GB", Some(32_000)),
        ("10de", "1db1", "Tesla V100-SXM2-32GB", Some(32_000)),
        ("10de", "1eb8", "Tesla T4", Some(16_000)),
        ("10de", "20b0", "A100-SXM4-40GB", Some(40_000)),
        ("10de", "20b2", "A100-SXM4-80GB", Some(80_000)),
        ("10de", "20b5", "A100 80GB PCIe", Some(80_000)),
        ("10de", "20f1", "A100-PCIE-40GB", Some(40_000)),
        ("10de", "2236", "A10", Some(24_000)),
        ("10de", "26b5", "L40", Some(48_000)),
        ("10de", "26b9", "L40S", Some(48_000)),
        ("10de", "2330", "H100 80GB HBM3", Some(80_000)),
        ("10de", "2331", "H100 PCIe", Some(80_000)),
        ("1002", "740c", "Instinct MI250X", Some(128_000)),
        ("1002", "74a1", "Instinct MI300X", Some(192_000)),
    ];
    known
        .iter()
        .find(|(v, p, _, _)| *v == vendor && *p == product)
        .map(|(_, _, name, memory)| (*name, *memory))
}

/// Splits `CUSTOM_PCI_10DE_1DB4` into `("10de", "1db4")`.
pub fn split_class(class: &str) -> Option<(String, String)> {
    let rest = class.strip_prefix("CUSTOM_PCI_")?;
    let (vendor, product) = rest.split_once('_')?;
    let hex4 = |s: &str| s.len() == 4 && s.chars().all(|c| c.is_ascii_hexdigit());
    (hex4(vendor) && hex4(product)).then(|| (vendor.to_lowercase(), product.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nova_pci_classes_split_into_ids() {
        assert_eq!(
            split_class("CUSTOM_PCI_10DE_1DB4"),
            Some(("10de".into(), "1db4".into()))
        );
        assert_eq!(split_class("CUSTOM_PCI_10DE"), None);
        assert_eq!(split_class("CUSTOM_PCI_GPU_ABCD"), None);
        assert_eq!(split_class("VGPU"), None);
        assert_eq!(
            product("10de", "1db4").map(|p| p.0),
            Some("Tesla V100-PCIE-16GB")
        );
        assert_eq!(vendor_name("10de"), Some("NVIDIA"));
    }
}
