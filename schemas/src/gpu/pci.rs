//! PCI vendor:device ids of data-centre GPUs -> the canonical model name, for sources that only see
//! the PCI device (OpenStack `pci_passthrough` aliases and `CUSTOM_PCI_<VENDOR>_<DEVICE>` resource
//! classes, `lspci -n`, nvidia-smi's `pci_device_id`).
//!
//! Source: the PCI ID Repository (pci.ids, <https://pci-ids.ucw.cz/>), vendors `10de` (NVIDIA) and
//! `1002` (AMD); the H100's `2330` is also in the real `nvidia-smi -q -x` capture
//! (`<pci_device_id>233010DE</pci_device_id>`). Ids that pci.ids gives to several products (AMD's
//! `740c`, "Instinct MI250X/MI250"; NVIDIA's `25b6`, "A16 / A2"; `2342`, "GH200 120GB / 480GB")
//! are left out: one id must not merge two products' GPU-hours.

use std::fmt;

/// A PCI vendor and device id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciId {
    pub vendor: u16,
    pub device: u16,
}

/// (vendor, device, canonical name).
const DEVICES: &[(u16, u16, &str)] = &[
    (0x10de, 0x102d, "Tesla K80"),
    (0x10de, 0x15f7, "Tesla P100-PCIE-12GB"),
    (0x10de, 0x15f8, "Tesla P100-PCIE-16GB"),
    (0x10de, 0x15f9, "Tesla P100-SXM2-16GB"),
    (0x10de, 0x1b38, "Tesla P40"),
    (0x10de, 0x1bb3, "Tesla P4"),
    (0x10de, 0x1db1, "Tesla V100-SXM2-16GB"),
    (0x10de, 0x1db4, "Tesla V100-PCIE-16GB"),
    (0x10de, 0x1db5, "Tesla V100-SXM2-32GB"),
    (0x10de, 0x1db6, "Tesla V100-PCIE-32GB"),
    (0x10de, 0x1df6, "Tesla V100S-PCIE-32GB"),
    (0x10de, 0x1eb8, "Tesla T4"),
    (0x10de, 0x20b0, "NVIDIA A100-SXM4-40GB"),
    (0x10de, 0x20b1, "NVIDIA A100-PCIE-40GB"),
    (0x10de, 0x20b2, "NVIDIA A100-SXM4-80GB"),
    (0x10de, 0x20b5, "NVIDIA A100 80GB PCIe"),
    (0x10de, 0x20b7, "NVIDIA A30"),
    (0x10de, 0x20f1, "NVIDIA A100-PCIE-40GB"),
    (0x10de, 0x2235, "NVIDIA A40"),
    (0x10de, 0x2236, "NVIDIA A10"),
    (0x10de, 0x2237, "NVIDIA A10G"),
    (0x10de, 0x2321, "NVIDIA H100 NVL"),
    (0x10de, 0x2330, "NVIDIA H100 80GB HBM3"),
    (0x10de, 0x2331, "NVIDIA H100 PCIe"),
    (0x10de, 0x2335, "NVIDIA H200"),
    (0x10de, 0x26b5, "NVIDIA L40"),
    (0x10de, 0x26b9, "NVIDIA L40S"),
    (0x10de, 0x27b8, "NVIDIA L4"),
    (0x1002, 0x738c, "AMD Instinct MI100"),
    (0x1002, 0x740f, "AMD Instinct MI210"),
    (0x1002, 0x74a0, "AMD Instinct MI300A"),
    (0x1002, 0x74a1, "AMD Instinct MI300X"),
];

impl PciId {
    pub const fn new(vendor: u16, device: u16) -> Self {
        Self { vendor, device }
    }

    /// Reads `10de:2330` (lspci's form, either case) or nvidia-smi's `233010DE` (device then vendor).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let hex = |s: &str| {
            (s.len() == 4 && s.chars().all(|c| c.is_ascii_hexdigit()))
                .then(|| u16::from_str_radix(s, 16).ok())
                .flatten()
        };
        if let Some((vendor, device)) = text.split_once(':') {
            return Some(Self::new(hex(vendor)?, hex(device)?));
        }
        let text = text.strip_prefix("0x").unwrap_or(text);
        if text.len() == 8 && text.is_ascii() {
            return Some(Self::new(hex(&text[4..])?, hex(&text[..4])?));
        }
        None
    }

    /// From the two hex halves of a `CUSTOM_PCI_10DE_2330` class or an alias's `vendor_id` and
    /// `product_id`.
    pub fn from_hex(vendor: &str, device: &str) -> Option<Self> {
        Self::parse(&format!("{vendor}:{device}"))
    }

    /// The canonical model name of a catalogued device.
    pub fn model(self) -> Option<&'static str> {
        DEVICES
            .iter()
            .find(|(vendor, device, _)| *vendor == self.vendor && *device == self.device)
            .map(|(_, _, name)| *name)
    }

    /// The vendor's name, for devices outside the table.
    pub fn vendor_name(self) -> Option<&'static str> {
        match self.vendor {
            0x10de => Some("NVIDIA"),
            0x1002 => Some("AMD"),
            0x8086 => Some("Intel"),
            _ => None,
        }
    }
}

impl fmt::Display for PciId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:04x}", self.vendor, self.device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::catalog;

    #[test]
    fn every_device_names_a_catalogued_model() {
        for (vendor, device, name) in DEVICES {
            assert_eq!(
                catalog::by_name(name).map(|e| e.name),
                Some(*name),
                "{vendor:04x}:{device:04x}"
            );
        }
    }

    #[test]
    fn the_h100_capture_names_its_own_device() {
        let xml = include_str!("../../tests/fixtures/gpu/h100-nvidia-smi-q.xml");
        let field = |tag: &str| {
            let open = format!("<{tag}>");
            let start = xml.find(&open).unwrap() + open.len();
            let end = start + xml[start..].find('<').unwrap();
            xml[start..end].to_owned()
        };
        let id = PciId::parse(&field("pci_device_id")).unwrap();
        assert_eq!(id, PciId::new(0x10de, 0x2330));
        assert_eq!(id.to_string(), "10de:2330");
        assert_eq!(id.model(), Some(field("product_name").as_str()));
    }

    #[test]
    fn ids_parse_in_each_spelling() {
        assert_eq!(PciId::parse("10DE:20B5"), Some(PciId::new(0x10de, 0x20b5)));
        assert_eq!(
            PciId::from_hex("10de", "1db4").and_then(PciId::model),
            Some("Tesla V100-PCIE-16GB")
        );
        assert_eq!(PciId::parse("10de:20b"), None);
        assert_eq!(PciId::parse("nvidia"), None);
        assert_eq!(PciId::new(0x1002, 0x740c).model(), None);
        assert_eq!(PciId::new(0x1002, 0x740c).vendor_name(), Some("AMD"));
    }
}
