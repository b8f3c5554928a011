//! The catalogue of GPU models: one canonical name per product, the name the vendor's own tools
//! print for it (NVML through `nvidia-smi --query-gpu=name` and DCGM's `modelName`; `amd-smi` /
//! `rocm-smi` product names), and the other spellings sources use for the same card.
//!
//! Sources of the facts (names only; nothing else was taken from them):
//! - NVIDIA names: `nvidia-smi -q` product names, e.g. `NVIDIA H100 80GB HBM3` in the capture in
//!   `reference/gpu-captures/h100-80gb-hbm3/`; NVML prints the same string DCGM reports as
//!   `modelName`. Drivers before R470 printed A100s without the `NVIDIA ` prefix
//!   (`A100-SXM4-40GB`), and T4, V100 and P100 keep their `Tesla ` prefix in current drivers.
//! - GPU Feature Discovery (`nvidia.com/gpu.product`, NVIDIA k8s-device-plugin docs): the NVML name
//!   with spaces turned into dashes, `-SHARED` appended for time-sliced or MPS resources and
//!   `-MIG-<profile>` under the single MIG strategy (`NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`).
//! - PCI device names (pci.ids, <https://pci-ids.ucw.cz/>) such as `A100 PCIe 80GB` or `H100 SXM5
//!   80GB`, listed here as aliases.
//! - Nominal memory (GB, as products and MIG profile names state it) from the vendors' data sheets;
//!   it is used for the MIG memory-fraction fallback only.
//!
//! Names are matched by a key: the words of the name, lower-case, with vendor and product-line
//! words (`NVIDIA`, `Tesla`, `AMD`, `Instinct`) dropped and the rest joined without separators, so
//! `NVIDIA-H100-80GB-HBM3`, `NVIDIA H100 80GB HBM3` and `h100 80gb hbm3` are one key.

use std::collections::HashMap;
use std::sync::OnceLock;

/// One GPU product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The canonical name, as the vendor's tools print it.
    pub name: &'static str,
    /// `NVIDIA`, `AMD`, `Intel`.
    pub vendor: &'static str,
    /// The model family the short names of users and schedulers use: `a100`, `h100`, `t4`.
    pub family: &'static str,
    /// Nominal device memory in GB (`80` for an H100 80GB).
    pub memory_gb: u32,
    /// Other spellings of the same product (pci.ids names, older driver names).
    pub aliases: &'static [&'static str],
}

const fn nvidia(
    name: &'static str,
    family: &'static str,
    memory_gb: u32,
    aliases: &'static [&'static str],
) -> Entry {
    Entry {
        name,
        vendor: "NVIDIA",
        family,
        memory_gb,
        aliases,
    }
}

const fn amd(name: &'static str, family: &'static str, memory_gb: u32) -> Entry {
    Entry {
        name,
        vendor: "AMD",
        family,
        memory_gb,
        aliases: &[],
    }
}

/// The data-centre GPUs sites publish. Order does not matter; names and aliases are unique keys.
pub const CATALOGUE: &[Entry] = &[
    // Blackwell and Hopper.
    nvidia("NVIDIA B200", "b200", 180, &[]),
    nvidia("NVIDIA H200", "h200", 141, &["H200 SXM 141GB"]),
    nvidia("NVIDIA H200 NVL", "h200", 141, &[]),
    nvidia("NVIDIA GH200 480GB", "gh200", 96, &[]),
    nvidia("NVIDIA H100 80GB HBM3", "h100", 80, &["H100 SXM5 80GB"]),
    nvidia("NVIDIA H100 PCIe", "h100", 80, &[]),
    nvidia("NVIDIA H100 NVL", "h100", 94, &[]),
    // Ampere.
    nvidia("NVIDIA A100-SXM4-40GB", "a100", 40, &[]),
    nvidia("NVIDIA A100-SXM4-80GB", "a100", 80, &[]),
    nvidia("NVIDIA A100-PCIE-40GB", "a100", 40, &[]),
    nvidia("NVIDIA A100 80GB PCIe", "a100", 80, &["A100 PCIe 80GB"]),
    nvidia("NVIDIA A30", "a30", 24, &["A30 PCIe"]),
    nvidia("NVIDIA A40", "a40", 48, &[]),
    nvidia("NVIDIA A10", "a10", 24, &[]),
    nvidia("NVIDIA A10G", "a10g", 24, &[]),
    nvidia("NVIDIA A16", "a16", 16, &[]),
    nvidia("NVIDIA A2", "a2", 16, &[]),
    // Ada.
    nvidia("NVIDIA L40S", "l40s", 48, &[]),
    nvidia("NVIDIA L40", "l40", 48, &[]),
    nvidia("NVIDIA L4", "l4", 24, &[]),
    // Turing, Volta, Pascal, Kepler.
    nvidia("Tesla T4", "t4", 16, &[]),
    nvidia("Tesla V100-SXM2-16GB", "v100", 16, &[]),
    nvidia("Tesla V100-SXM2-32GB", "v100", 32, &[]),
    nvidia("Tesla V100-PCIE-16GB", "v100", 16, &[]),
    nvidia("Tesla V100-PCIE-32GB", "v100", 32, &[]),
    nvidia("Tesla V100S-PCIE-32GB", "v100s", 32, &[]),
    nvidia("Tesla P100-PCIE-16GB", "p100", 16, &[]),
    nvidia("Tesla P100-PCIE-12GB", "p100", 12, &[]),
    nvidia("Tesla P100-SXM2-16GB", "p100", 16, &[]),
    nvidia("Tesla P40", "p40", 24, &[]),
    nvidia("Tesla P4", "p4", 8, &[]),
    nvidia("Tesla K80", "k80", 12, &[]),
    // AMD Instinct.
    amd("AMD Instinct MI325X", "mi325x", 256),
    amd("AMD Instinct MI300X", "mi300x", 192),
    amd("AMD Instinct MI300A", "mi300a", 128),
    amd("AMD Instinct MI250X", "mi250x", 128),
    amd("AMD Instinct MI250", "mi250", 128),
    amd("AMD Instinct MI210", "mi210", 64),
    amd("AMD Instinct MI100", "mi100", 32),
];

/// Words that name a vendor or product line, not the model: dropped from keys, so `Tesla T4`,
/// `NVIDIA T4` and `T4` are one key.
const VENDOR_WORDS: &[&str] = &["nvidia", "tesla", "amd", "instinct", "corporation"];

/// The matching key of a name (see the module documentation).
pub fn key(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .filter(|word| !VENDOR_WORDS.contains(&word.as_str()))
        .collect()
}

/// The device name with what sources append for sharing removed: GFD's `-SHARED` and
/// `-MIG-<profile>`, nvidia-smi's ` MIG <profile>` for a MIG device. Returns the name and the MIG
/// profile when one was named.
pub fn strip_sharing(raw: &str) -> (&str, Option<&str>) {
    let mut name = raw.trim();
    if let Some(stripped) = name.strip_suffix("-SHARED") {
        name = stripped;
    }
    for marker in ["-MIG-", " MIG "] {
        if let Some(at) = name.find(marker) {
            let profile = name[at + marker.len()..].trim();
            let profile = profile.strip_suffix("-SHARED").unwrap_or(profile);
            return (name[..at].trim(), (!profile.is_empty()).then_some(profile));
        }
    }
    (name, None)
}

/// Every catalogued product: [`CATALOGUE`] and the vendor tables kept in their own files
/// (`vendors::intel::CATALOGUE`).
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    CATALOGUE.iter().chain(super::vendors::intel::CATALOGUE)
}

fn index() -> &'static HashMap<String, &'static Entry> {
    static INDEX: OnceLock<HashMap<String, &'static Entry>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map = HashMap::new();
        for entry in entries() {
            for name in std::iter::once(&entry.name).chain(entry.aliases) {
                map.insert(key(name), entry);
            }
        }
        map
    })
}

/// The catalogue entry a name (any source's spelling, sharing suffixes included) names exactly.
pub fn lookup(raw: &str) -> Option<&'static Entry> {
    let (name, _) = strip_sharing(raw);
    index().get(&key(name)).copied()
}

/// The entry of a canonical name, as [`lookup`] but without the suffix handling.
pub fn by_name(name: &str) -> Option<&'static Entry> {
    index().get(&key(name)).copied()
}

/// The catalogue entries of a family (`a100` -> the four A100 variants).
pub fn family(family: &str) -> Vec<&'static Entry> {
    entries().filter(|entry| entry.family == family).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_keys() {
        let mut seen = HashMap::new();
        for entry in entries() {
            for name in std::iter::once(&entry.name).chain(entry.aliases) {
                if let Some(other) = seen.insert(key(name), entry.name) {
                    panic!("{name} of {} is also a name of {other}", entry.name);
                }
            }
        }
    }

    #[test]
    fn every_canonical_name_finds_itself_and_its_family() {
        for entry in entries() {
            assert_eq!(lookup(entry.name).map(|e| e.name), Some(entry.name));
            assert!(family(entry.family).contains(&entry));
        }
    }

    #[test]
    fn sharing_suffixes_are_removed() {
        assert_eq!(strip_sharing("Tesla-T4-SHARED"), ("Tesla-T4", None));
        assert_eq!(
            strip_sharing("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
            ("NVIDIA-A100-SXM4-40GB", Some("1g.5gb"))
        );
        assert_eq!(
            strip_sharing("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED"),
            ("NVIDIA-H100-80GB-HBM3", Some("1g.10gb"))
        );
        assert_eq!(
            strip_sharing("NVIDIA A100-SXM4-40GB MIG 1g.5gb"),
            ("NVIDIA A100-SXM4-40GB", Some("1g.5gb"))
        );
    }
}
