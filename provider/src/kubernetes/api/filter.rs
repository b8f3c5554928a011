//! Which resources and labels of an API object are read: GPU resources (and `cpu`, for a
//! share's job slots) and GPU vendors' labels are kept, everything else is skipped by serde
//! without allocating.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use super::Str;

/// The GPU entries of a resource map (resource name, quantity text), and its `cpu` entry (for a
/// share's job slots). A container names one GPU resource almost always, so the first entry is
/// kept inline and a list is allocated only for more.
#[derive(Debug, Clone, Default)]
pub struct GpuQuantities<'a> {
    first: Option<(Str<'a>, Str<'a>)>,
    more: Vec<(Str<'a>, Str<'a>)>,
    cpu: Option<Str<'a>>,
}

impl<'a> GpuQuantities<'a> {
    /// Whether it names no GPU resource (a `cpu` entry does not count).
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The `cpu` quantity's text, if named.
    pub fn cpu(&self) -> Option<&str> {
        self.cpu.as_deref()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(Str<'a>, Str<'a>)> {
        self.first.iter().chain(&self.more)
    }

    fn push(&mut self, entry: (Str<'a>, Str<'a>)) {
        if self.first.is_none() {
            self.first = Some(entry);
        } else {
            self.more.push(entry);
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for GpuQuantities<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        gpu_resources(deserializer)
    }
}

/// Whether a resource name is one the GPU accounting reads: `nvidia.com/gpu`,
/// `nvidia.com/gpu.shared`, `nvidia.com/mig-<profile>`, `amd.com/gpu`, Intel's
/// `gpu.intel.com/i915` and `gpu.intel.com/xe`, and any other resource of those vendors that names
/// a GPU (published and metered as whole GPUs, with a warning; see [`super::super::vendors`]). Not GPUs:
/// Intel's monitoring resources and GPU-aware-scheduling amounts (`gpu.intel.com/millicores`,
/// `memory.max`, `tiles`), NVIDIA's network resources (`nvidia.com/rdma_shared_device_a`,
/// `nvidia.com/hostdev`).
pub fn is_gpu_resource(name: &str) -> bool {
    match name.split_once('/') {
        // Read for every resource of every pod: no allocation.
        Some(("nvidia.com" | "amd.com", rest)) => {
            rest == "gpu"
                || rest.starts_with("mig-")
                || rest
                    .as_bytes()
                    .windows(3)
                    .any(|word| word.eq_ignore_ascii_case(b"gpu"))
        }
        Some(("gpu.intel.com", rest)) => {
            !matches!(rest, "millicores" | "memory.max" | "tiles") && !rest.ends_with("_monitoring")
        }
        _ => false,
    }
}

/// Whether a node label is one the device reading looks at ([`super::super::labels`]).
pub fn is_gpu_label(key: &str) -> bool {
    key.starts_with("nvidia.com/")
        || key.starts_with("amd.com/")
        || key.starts_with("beta.amd.com/")
        || key.starts_with("gpu.intel.com/")
}

pub(super) fn gpu_labels<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    filtered_map(deserializer, is_gpu_label)
}

pub(super) fn gpu_resource_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    filtered_map(deserializer, is_gpu_resource)
}

pub(super) fn gpu_and_cpu_resource_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    filtered_map(deserializer, |name| name == "cpu" || is_gpu_resource(name))
}

/// A map of strings keeping only the entries whose key passes `keep`; the others are skipped
/// without allocating. `null` reads as an empty map.
fn filtered_map<'de, D: Deserializer<'de>>(
    deserializer: D,
    keep: fn(&str) -> bool,
) -> Result<BTreeMap<String, String>, D::Error> {
    struct Filtered(fn(&str) -> bool);
    impl<'de> Visitor<'de> for Filtered {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of strings")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = BTreeMap::new();
            while let Some(key) = map.next_key::<Str<'de>>()? {
                if (self.0)(&key) {
                    let value: String = map.next_value()?;
                    kept.insert(key.0.into_owned(), value);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(kept)
        }
    }
    deserializer.deserialize_any(Filtered(keep))
}

/// Reads a resource map keeping only GPU entries and `cpu`, so `memory` and the rest cost nothing.
fn gpu_resources<'de: 'a, 'a, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<GpuQuantities<'a>, D::Error> {
    struct GpuOnly<'a>(std::marker::PhantomData<&'a ()>);
    impl<'de: 'a, 'a> Visitor<'de> for GpuOnly<'a> {
        type Value = GpuQuantities<'a>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of resource names to quantities")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(GpuQuantities::default())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = GpuQuantities::default();
            while let Some(key) = map.next_key::<Str<'a>>()? {
                if is_gpu_resource(&key.0) {
                    let value: Str<'a> = map.next_value()?;
                    kept.push((key, value));
                } else if key.0 == "cpu" {
                    kept.cpu = Some(map.next_value()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(kept)
        }
    }
    deserializer.deserialize_any(GpuOnly(std::marker::PhantomData))
}
