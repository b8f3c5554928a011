//! PCI identities in what Nova and Placement name: `CUSTOM_PCI_<VENDOR>_<PRODUCT>` resource classes
//! (their PCI ids, which name a GPU through the one PCI table of the model vocabulary,
//! [`accelfed_schemas::gpu::PciId`]) and the PCI address in a device resource provider's name
//! (`gpu-a100-01_pci_0000_81_00_0`: Nova names each GPU or virtual function it reports after its
//! host and address).

/// Splits `CUSTOM_PCI_10DE_1DB4` into `("10de", "1db4")`.
pub fn split_class(class: &str) -> Option<(String, String)> {
    let rest = class.strip_prefix("CUSTOM_PCI_")?;
    let (vendor, product) = rest.split_once('_')?;
    let hex4 = |s: &str| s.len() == 4 && s.chars().all(|c| c.is_ascii_hexdigit());
    (hex4(vendor) && hex4(product)).then(|| (vendor.to_lowercase(), product.to_lowercase()))
}

/// A PCI address: domain, bus, device (slot) and function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddress {
    pub domain: u16,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl PciAddress {
    /// Whether this is the first function of the bus's first device (`xx:00.0`), where a GPU's
    /// physical function sits; its SR-IOV virtual functions follow on the same bus (an A100 at
    /// `41:00.0` has them at `41:00.4` to `41:03.3`).
    pub fn is_first_function(self) -> bool {
        self.device == 0 && self.function == 0
    }
}

/// The host part and the PCI address of a provider named `<host>_pci_<domain>_<bus>_<device>_<function>`
/// (hex, as Nova's libvirt driver writes them); `None` for any other name.
pub fn provider_address(name: &str) -> Option<(&str, PciAddress)> {
    let (host, address) = name.rsplit_once("_pci_")?;
    let mut parts = address.split('_');
    let mut field = |digits: usize| {
        parts
            .next()
            .filter(|part| part.len() == digits && part.chars().all(|c| c.is_ascii_hexdigit()))
            .and_then(|part| u16::from_str_radix(part, 16).ok())
    };
    let (domain, bus, device, function) = (field(4)?, field(2)?, field(2)?, field(1)?);
    if parts.next().is_some() || device > 0x1f || function > 7 || host.is_empty() {
        return None;
    }
    Some((
        host,
        PciAddress {
            domain,
            bus: u8::try_from(bus).ok()?,
            device: u8::try_from(device).ok()?,
            function: u8::try_from(function).ok()?,
        },
    ))
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

    #[test]
    fn provider_names_give_host_and_address() {
        // The captured mdev layout's name, and a virtual function's (A100 VFs from 41:00.4 on).
        let (host, pf) = provider_address("gpu-a100-01_pci_0000_81_00_0").unwrap();
        assert_eq!(host, "gpu-a100-01");
        assert_eq!((pf.domain, pf.bus, pf.device, pf.function), (0, 0x81, 0, 0));
        assert!(pf.is_first_function());
        let (_, vf) = provider_address("node_with_pci_in_name_pci_0000_41_01_3").unwrap();
        assert_eq!((vf.bus, vf.device, vf.function), (0x41, 1, 3));
        assert!(!vf.is_first_function());
        for name in [
            "gpu-a100-01",
            "gpu-v100-01_0000:3B:00.0",
            "host_pci_0000_41_00",
            "host_pci_0000_41_00_8",
            "host_pci_0000_41_20_0",
            "host_pci_0000_41_00_0_1",
            "_pci_0000_41_00_0",
            "host_pci_00g0_41_00_0",
        ] {
            assert_eq!(provider_address(name), None, "{name}");
        }
    }
}
