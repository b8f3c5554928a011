//! `CUSTOM_PCI_<VENDOR>_<PRODUCT>` resource classes: their PCI ids, which name a GPU through the one
//! PCI table of the model vocabulary ([`accelfed_schemas::gpu::PciId`]).

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
    }
}
