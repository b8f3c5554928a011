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
//! `amd.com/gpu.product-name`, `.device-id`, `.vram` (`64G`), `.family`, `.driver-version`, and
//! its older releases `beta.amd.com/gpu.<kind>.<value>=<count>` (`beta.amd.com/gpu.device-id.740f=8`);
//! Intel's NFD rules `gpu.intel.com/device-id.<class>-<device>.count`, `gpu.intel.com/product`,
//! `gpu.intel.com/device.count` (read in [`super::vendors`]).
//!
//! A label with a garbage value is reported (node and label named) and treated as absent.

use std::collections::BTreeMap;

use accelfed_schemas::gpu::vgpu::VgpuType;
use accelfed_schemas::gpu::{GpuModel, MemoryMb};

/// The most memory a GPU label can mean in MiB: 1 TiB, four times the largest GPU memory made
/// (256 GB on an MI325X). Above it a `.memory` label is read as bytes.
pub const MAX_GPU_MIB: u64 = 1024 * 1024;

/// The labels of one node, with the warnings reading them produced.
#[derive(Debug)]
pub struct Labels<'a> {
    node: &'a str,
    labels: &'a BTreeMap<String, String>,
    pub warnings: Vec<String>,
    /// Notes that are about a name, not the node (a GPU model outside the catalogue): the reader
    /// reports each once, on the first node that has it.
    pub names: Vec<String>,
}

impl<'a> Labels<'a> {
    pub fn new(node: &'a str, labels: &'a BTreeMap<String, String>) -> Self {
        Self {
            node,
            labels,
            warnings: Vec::new(),
            names: Vec::new(),
        }
    }

    /// A label's value, if present and not empty.
    pub fn text(&self, key: &str) -> Option<&'a str> {
        self.labels
            .get(key)
            .map(String::as_str)
            .filter(|value| !value.trim().is_empty())
    }

    /// The labels whose key starts with `prefix`, as (the rest of the key, value): the older AMD
    /// labeller and Intel's NFD rules put the value in the key (`beta.amd.com/gpu.device-id.740f`,
    /// `gpu.intel.com/device-id.0380-0bd5.count`).
    pub fn under(&self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.labels
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .map_while(move |(key, value)| {
                key.strip_prefix(prefix).map(|rest| (rest, value.as_str()))
            })
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

    /// Reports something about the node's GPUs that is not one label's fault.
    pub fn note(&mut self, what: &str) {
        self.warnings.push(format!("node {:?}: {what}", self.node));
    }

    /// Reports something about a name, not the node (see [`Labels::names`]).
    pub fn note_name(&mut self, note: String) {
        if !self.names.contains(&note) {
            self.names.push(note);
        }
    }

    /// Reports a label: `why` says what is wrong and what was done instead.
    pub fn warn(&mut self, key: &str, value: &str, why: &str) {
        self.warnings
            .push(format!("node {:?}: label {key}={value:?} {why}", self.node));
    }

    /// GFD's device memory of a resource prefix, MiB converted to MB. A value no GPU can have in
    /// MiB (over [`MAX_GPU_MIB`]) was written in bytes (one cluster's GFD labelled a T4
    /// `16106127360`): it is converted from bytes, with a warning naming the node.
    pub fn memory_mib(&mut self, prefix: &str) -> Option<MemoryMb> {
        let key = format!("{prefix}.memory");
        let value = self.number(&key).filter(|mib| *mib > 0)?;
        if value <= MAX_GPU_MIB {
            return Some(MemoryMb::from_mib(value));
        }
        let mib = value / (1024 * 1024);
        if mib == 0 || mib > MAX_GPU_MIB {
            self.warn(
                &key,
                &value.to_string(),
                "is no GPU's memory in MiB or bytes; ignored",
            );
            return None;
        }
        self.warn(
            &key,
            &value.to_string(),
            &format!("is too large for MiB, so it is bytes; read as {mib} MiB"),
        );
        Some(MemoryMb::from_mib(mib))
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

/// The device name from GFD's product label, as [`GpuModel::canonical`] names it: sharing and MIG
/// suffixes removed and the catalogued product's canonical name (`NVIDIA-A100-SXM4-40GB` ->
/// `NVIDIA A100-SXM4-40GB`, `Tesla-T4-SHARED` -> `Tesla T4`). A product outside the catalogue keeps
/// its label's spelling, suffixes removed.
pub fn nvidia_model(product: &str) -> String {
    let (name, _) = accelfed_schemas::gpu::catalog::strip_sharing(product);
    if accelfed_schemas::gpu::catalog::lookup(name).is_none() {
        // A vGPU guest's product is its vGPU type (`NVIDIA-A10-12Q`): the model is the board's GPU.
        if let Some(parent) =
            accelfed_schemas::gpu::vgpu::parse(name).and_then(|vgpu| vgpu.parent())
        {
            return parent.name.to_owned();
        }
        // Outside the catalogue: only the dash GFD put after the vendor word is undone; the
        // device's own name has the others.
        for vendor in ["NVIDIA-", "Tesla-", "Quadro-", "GRID-"] {
            if let Some(rest) = name.strip_prefix(vendor) {
                return format!("{} {rest}", &vendor[..vendor.len() - 1]);
            }
        }
    }
    GpuModel::canonical(name).map_or_else(|_| name.to_owned(), |model| model.as_str().to_owned())
}

/// The vGPU type a product label names (`NVIDIA-A10-12Q` in a vGPU guest), when it is no catalogued
/// GPU's name.
pub fn vgpu_type(product: &str) -> Option<VgpuType<'_>> {
    let (name, _) = accelfed_schemas::gpu::catalog::strip_sharing(product);
    if accelfed_schemas::gpu::catalog::lookup(name).is_some() {
        return None;
    }
    accelfed_schemas::gpu::vgpu::parse(name)
}

/// The MIG profile GFD's product label names under the single strategy (`...-MIG-1g.10gb`).
pub fn mig_profile(product: &str) -> Option<&str> {
    accelfed_schemas::gpu::catalog::strip_sharing(product).1
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
    fn memory_in_bytes_is_converted_with_a_warning_naming_the_node() {
        let map = labels(&[
            ("nvidia.com/gpu.memory", "16106127360"),
            ("nvidia.com/mig-1g.5gb.memory", "99999999999999999"),
        ]);
        let mut read = Labels::new("t4-node", &map);
        assert_eq!(
            read.memory_mib("nvidia.com/gpu"),
            Some(MemoryMb::from_mib(15360))
        );
        assert_eq!(read.memory_mib("nvidia.com/mig-1g.5gb"), None);
        assert_eq!(
            read.warnings,
            vec![
                "node \"t4-node\": label nvidia.com/gpu.memory=\"16106127360\" is too large for MiB, so it is bytes; read as 15360 MiB",
                "node \"t4-node\": label nvidia.com/mig-1g.5gb.memory=\"99999999999999999\" is no GPU's memory in MiB or bytes; ignored",
            ]
        );
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
