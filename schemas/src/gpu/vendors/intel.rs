//! Intel data-centre GPUs: catalogue entries, PCI device ids and the product labels of Intel's NFD
//! rules.
//!
//! Sources (names and ids only):
//! - Device ids and the names Intel's compute runtime prints (`Intel(R) Data Center GPU Max 1550`):
//!   the PVC device list of intel/compute-runtime (`NAMEDDEVICE(0x0BD5, ..., "Intel(R) Data Center
//!   GPU Max 1550")`, MIT licence), which gives `0bd5`/`0bd6` to the Max 1550, `0bd7`/`0bd8` to the
//!   Max 1350 and `0bd9`/`0bda`/`0bdb` to the Max 1100; and Intel's graphics processor table
//!   (<https://dgpu-docs.intel.com/devices/hardware-table.html>): `56c0` Flex 170, `56c1` Flex 140.
//! - Product labels: the `gpu.intel.com/product` values of intel-device-plugins-for-kubernetes'
//!   NFD rules (`deployments/nfd/overlays/node-feature-rules/platform-labeling-rules.yaml`, Apache
//!   2.0): `Max_1550` for `0bd5`, `Max_1100` for `0bda`, `Flex_170` for `56c0`, `Flex_140` for
//!   `56c1`.
//! - Memory: Intel's product pages (Max 1550 128 GB, Max 1350 96 GB, Max 1100 48 GB HBM2e; Flex
//!   170 16 GB; Flex 140 12 GB on a card of two GPUs, so 6 GB each, and each GPU is its own PCI
//!   device).
//!
//! The canonical name is the compute runtime's without `(R)`: `Intel Data Center GPU Max 1550`.

use crate::gpu::catalog::Entry;

const fn intel(
    name: &'static str,
    family: &'static str,
    memory_gb: u32,
    aliases: &'static [&'static str],
) -> Entry {
    Entry {
        name,
        vendor: "Intel",
        family,
        memory_gb,
        aliases,
    }
}

/// The Intel GPUs of the model catalogue.
pub const CATALOGUE: &[Entry] = &[
    intel(
        "Intel Data Center GPU Max 1550",
        "max1550",
        128,
        &["Intel(R) Data Center GPU Max 1550"],
    ),
    intel(
        "Intel Data Center GPU Max 1350",
        "max1350",
        96,
        &["Intel(R) Data Center GPU Max 1350"],
    ),
    intel(
        "Intel Data Center GPU Max 1100",
        "max1100",
        48,
        &["Intel(R) Data Center GPU Max 1100"],
    ),
    intel(
        "Intel Data Center GPU Flex 170",
        "flex170",
        16,
        &["Intel(R) Data Center GPU Flex 170"],
    ),
    intel(
        "Intel Data Center GPU Flex 140",
        "flex140",
        6,
        &["Intel(R) Data Center GPU Flex 140"],
    ),
];

/// (PCI device id, canonical name); vendor `8086`.
const DEVICES: &[(u16, &str)] = &[
    (0x0bd5, "Intel Data Center GPU Max 1550"),
    (0x0bd6, "Intel Data Center GPU Max 1550"),
    (0x0bd7, "Intel Data Center GPU Max 1350"),
    (0x0bd8, "Intel Data Center GPU Max 1350"),
    (0x0bd9, "Intel Data Center GPU Max 1100"),
    (0x0bda, "Intel Data Center GPU Max 1100"),
    (0x0bdb, "Intel Data Center GPU Max 1100"),
    (0x56c0, "Intel Data Center GPU Flex 170"),
    (0x56c1, "Intel Data Center GPU Flex 140"),
];

/// The canonical name of an Intel data-centre GPU's PCI device id.
pub fn device_name(device: u16) -> Option<&'static str> {
    DEVICES
        .iter()
        .find(|(id, _)| *id == device)
        .map(|(_, name)| *name)
}

/// The canonical name of a `gpu.intel.com/product` label (`Max_1550`, `Flex_170`).
pub fn product_name(label: &str) -> Option<&'static str> {
    let wanted = crate::gpu::catalog::key(label);
    CATALOGUE
        .iter()
        .find(|entry| entry.family == wanted)
        .map(|entry| entry.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{GpuModel, catalog};

    #[test]
    fn ids_and_labels_name_catalogued_models() {
        for (id, name) in DEVICES {
            assert_eq!(
                catalog::by_name(name).map(|e| e.name),
                Some(*name),
                "{id:04x}"
            );
        }
        // What Intel's NFD rules label for the ids they know.
        for (id, label) in [
            (0x0bd5, "Max_1550"),
            (0x0bda, "Max_1100"),
            (0x56c0, "Flex_170"),
            (0x56c1, "Flex_140"),
        ] {
            assert_eq!(device_name(id), product_name(label), "{label}");
            assert!(device_name(id).is_some(), "{label}");
        }
        assert_eq!(product_name("Max_9999"), None);
        assert_eq!(device_name(0x9a49), None);
    }

    #[test]
    fn the_compute_runtimes_name_and_the_short_name_are_the_model() {
        for raw in ["Intel(R) Data Center GPU Max 1550", "Max 1550", "max_1550"] {
            assert_eq!(
                GpuModel::canonical(raw).unwrap().as_str(),
                "Intel Data Center GPU Max 1550",
                "{raw}"
            );
        }
    }
}
