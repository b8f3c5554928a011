//! What a node's labels say about its GPUs: NVIDIA GPU Feature Discovery (GFD) and the AMD GPU
//! labeller.
//!
//! GFD writes, per resource prefix (`nvidia.com/gpu`, or `nvidia.com/mig-1g.10gb` under the mixed
//! MIG strategy): `.product` (the device name with spaces as dashes, `-SHARED` appended when the
//! resource is shared, `-MIG-<profile>` under the single MIG strategy), `.memory` (MiB), `.count`,
//! `.family`, `.compute.major`/`.minor`, `.replicas` and `.sharing-strategy`; and per node
//! `nvidia.com/mig.strategy`, `nvidia.com/vgpu.present`, and the driver and CUDA versions, spelt
//! `cuda.driver-version.*` / `cuda.runtime-version.*` since GFD 0.15 and `cuda.driver.*` /
//! `cuda.runtime.*` before (both are read, the current spelling first). The AMD labeller writes
//! `amd.com/gpu.product-name`, `.vram` (`64G`), `.family`, `.driver-version`, formerly under
//! `beta.amd.com/`.
//!
//! A label with a garbage value is reported (node and label named) and treated as absent.

use std::collections::BTreeMap;

use accelfed_schemas::gpu::MemoryMb;

/// The labels of one node, with the warnings reading them produced.
#[derive(Debug)]
pub struct Labels<'a> {
    node: &'a str,
    labels: &'a BTreeMap<String, String>,
    pub warnings: Vec<String>,
}

impl<'a> Labels<'a> {
    pub fn new(node: &'a str, labels: &'a BTreeMap<String, String>) -> Self {
        Self {
            node,
            labels,
            warnings: Vec::new(),
        }
    }

    /// A label's value, if present and not empty.
    pub fn text(&self, key: &str) -> Option<&'a str> {
        self.labels
            .get(key)
            .map(String::as_str)
            .filter(|value| !value.trim().is_empty())
    }

    /// The first present of several spellings.
    pub fn first(&self, keys: &[&str]) -> Option<&'a str> {
        keys.iter().find_map(|key| self.text(key))
    }

    /// A whole-number label; garbage is reported and read as absent.
    pub fn number(&mut self, key: &str) -> Option<u64> {
        let value = self.text(key)?;
        match value.trim().parse::<u64>() {
            Ok(number) => Some(number),
            Err(_) => {
                self.warn(key, value, "is not a whole number; ignored");
                None
            }
        }
    }

    /// Reports a label: `why` says what is wrong and what was done instead.
    pub fn warn(&mut self, key: &str, value: &str, why: &str) {
        self.warnings
            .push(format!("node {:?}: label {key}={value:?} {why}", self.node));
    }

    /// GFD's device memory of a resource prefix, MiB converted to MB.
    pub fn memory_mib(&mut self, prefix: &str) -> Option<MemoryMb> {
        self.number(&format!("{prefix}.memory"))
            .filter(|mib| *mib > 0)
            .map(MemoryMb::from_mib)
    }

    /// GFD's compute capability of a resource prefix, `8.0`.
    pub fn compute_capability(&mut self, prefix: &str) -> Option<String> {
        let major = self.number(&format!("{prefix}.compute.major"))?;
        let minor = self.number(&format!("{prefix}.compute.minor"))?;
        Some(format!("{major}.{minor}"))
    }

    /// The NVIDIA driver version, `535.104.05`.
    pub fn nvidia_driver(&self) -> Option<String> {
        if let Some(full) = self.text("nvidia.com/cuda.driver-version.full") {
            return Some(full.to_owned());
        }
        let major = self.first(&[
            "nvidia.com/cuda.driver-version.major",
            "nvidia.com/cuda.driver.major",
        ])?;
        let minor = self.first(&[
            "nvidia.com/cuda.driver-version.minor",
            "nvidia.com/cuda.driver.minor",
        ]);
        let revision = self.first(&[
            "nvidia.com/cuda.driver-version.revision",
            "nvidia.com/cuda.driver.rev",
        ]);
        Some(join_version(major, minor, revision))
    }

    /// The CUDA version the driver supports, `12.2`.
    pub fn cuda(&self) -> Option<String> {
        if let Some(full) = self.text("nvidia.com/cuda.runtime-version.full") {
            return Some(full.to_owned());
        }
        let major = self.first(&[
            "nvidia.com/cuda.runtime-version.major",
            "nvidia.com/cuda.runtime.major",
        ])?;
        let minor = self.first(&[
            "nvidia.com/cuda.runtime-version.minor",
            "nvidia.com/cuda.runtime.minor",
        ]);
        Some(join_version(major, minor, None))
    }

    /// AMD's label of one kind, current spelling first.
    pub fn amd(&self, suffix: &str) -> Option<&'a str> {
        self.first(&[
            &format!("amd.com/gpu.{suffix}"),
            &format!("beta.amd.com/gpu.{suffix}"),
        ])
    }
}

fn join_version(major: &str, minor: Option<&str>, revision: Option<&str>) -> String {
    [Some(major), minor, revision]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(".")
}

/// The device name from GFD's product label: sharing and MIG suffixes removed, and the dash GFD put
/// after the vendor word turned back into a space (`NVIDIA-A100-SXM4-40GB` -> `NVIDIA
/// A100-SXM4-40GB`, `Tesla-T4-SHARED` -> `Tesla T4`). Other dashes stay: the device's own name has
/// them, and model matching is by tokens anyway.
pub fn nvidia_model(product: &str) -> String {
    let mut name = product.trim();
    if let Some(stripped) = name.strip_suffix("-SHARED") {
        name = stripped;
    }
    if let Some(at) = name.find("-MIG-") {
        name = &name[..at];
    }
    for vendor in ["NVIDIA-", "Tesla-", "Quadro-", "GRID-"] {
        if let Some(rest) = name.strip_prefix(vendor) {
            return format!("{} {rest}", &vendor[..vendor.len() - 1]);
        }
    }
    name.to_owned()
}

/// AMD's product label with underscores as spaces (`Instinct_MI210` -> `AMD Instinct MI210`).
pub fn amd_model(product: &str) -> String {
    let name = product.trim().replace('_', " ");
    if name.starts_with("AMD") {
        name
    } else {
        format!("AMD {name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn product_labels_become_device_names() {
        assert_eq!(
            nvidia_model("NVIDIA-A100-SXM4-40GB"),
            "NVIDIA A100-SXM4-40GB"
        );
        assert_eq!(nvidia_model("Tesla-T4-SHARED"), "Tesla T4");
        assert_eq!(
            nvidia_model("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
            "NVIDIA A100-SXM4-40GB"
        );
        assert_eq!(amd_model("Instinct_MI210"), "AMD Instinct MI210");
    }

    #[test]
    fn driver_and_cuda_read_both_spellings() {
        let current = labels(&[
            ("nvidia.com/cuda.driver-version.major", "550"),
            ("nvidia.com/cuda.driver-version.minor", "54"),
            ("nvidia.com/cuda.driver-version.revision", "15"),
            ("nvidia.com/cuda.runtime-version.major", "12"),
            ("nvidia.com/cuda.runtime-version.minor", "4"),
        ]);
        let read = Labels::new("n", &current);
        assert_eq!(read.nvidia_driver().as_deref(), Some("550.54.15"));
        assert_eq!(read.cuda().as_deref(), Some("12.4"));
        let deprecated = labels(&[
            ("nvidia.com/cuda.driver.major", "535"),
            ("nvidia.com/cuda.driver.minor", "104"),
            ("nvidia.com/cuda.driver.rev", "05"),
            ("nvidia.com/cuda.runtime.major", "12"),
            ("nvidia.com/cuda.runtime.minor", "2"),
        ]);
        let read = Labels::new("n", &deprecated);
        assert_eq!(read.nvidia_driver().as_deref(), Some("535.104.05"));
        assert_eq!(read.cuda().as_deref(), Some("12.2"));
    }

    #[test]
    fn memory_is_mib_converted_and_garbage_is_reported() {
        let map = labels(&[
            ("nvidia.com/gpu.memory", "40960"),
            ("nvidia.com/mig-1g.5gb.memory", "lots"),
        ]);
        let mut read = Labels::new("gpu-1", &map);
        assert_eq!(
            read.memory_mib("nvidia.com/gpu"),
            Some(MemoryMb::from_mib(40960))
        );
        assert_eq!(read.memory_mib("nvidia.com/mig-1g.5gb"), None);
        assert_eq!(
            read.warnings,
            vec![
                "node \"gpu-1\": label nvidia.com/mig-1g.5gb.memory=\"lots\" is not a whole number; ignored"
            ]
        );
    }
}
